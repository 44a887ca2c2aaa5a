// @sms/crypto: ids, secrets and encryption at rest. WebCrypto and standard
// JavaScript only, so it behaves identically under Deno and Node.

export { ID_BODY_LENGTH, ID_PREFIXES, type IdPrefix, idTimestamp, isId, newId } from "./id.ts";
export {
  type DecryptErrorReason,
  DecryptError,
  generateKeySpec,
  type Keyring,
  KeyringError,
  parseKeyring,
} from "./keyring.ts";
export {
  API_KEY_PATTERN,
  API_KEY_PREFIX_LENGTH,
  type ApiKeyMode,
  apiKeyPrefix,
  newApiKey,
  randomToken,
  sha256Hex,
  timingSafeEqual,
} from "./secret.ts";
export { type CookieSealer, createCookieSealer, MIN_COOKIE_SECRET_LENGTH } from "./sealer.ts";
export { sha256HexSync } from "./sha256.ts";
