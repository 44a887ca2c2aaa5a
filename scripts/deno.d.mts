// Types of scripts/deno.mjs for the TypeScript files that import it (tests, benchmarks).
export declare function denoBinary(): string;
export declare const DENO_RUN_FLAGS: readonly string[];
export declare function denoRunArgs(script: string, ...args: string[]): string[];
