// A new API key as it is stored: its SHA-256 hash, its displayable prefix and
// its row id. The key itself is shown once and never stored.
import { apiKeyPrefix, newApiKey, newId, sha256HexSync } from "@sms/crypto";
import type { KeyMode } from "../model/keys.ts";

export type MintedApiKey = { apiKey: string; keyHash: string; prefix: string; keyId: string };

export function mintApiKey(mode: KeyMode, now: Date): MintedApiKey {
  const apiKey = newApiKey(mode);
  return {
    apiKey,
    keyHash: sha256HexSync(apiKey),
    prefix: apiKeyPrefix(apiKey),
    keyId: newId("key", now.getTime()),
  };
}
