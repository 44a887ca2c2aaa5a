// Types of scripts/release.mjs for the TypeScript files that import it (the release smoke test).
export type BuiltRelease = {
  /** outDir/release: the unpacked release. */
  dir: string;
  /** outDir/sms-api-<version>-linux-x64.tar.gz */
  tarball: string;
  version: string;
  unpackedBytes: number;
  tarballBytes: number;
  seconds: number;
};
export declare const RUNTIME_PACKAGES: readonly string[];
export declare const FORBIDDEN: readonly RegExp[];
export declare function buildRelease(options?: {
  outDir?: string;
  log?: (line: string) => void;
}): Promise<BuiltRelease>;
