// Header values as text. HTTP carries header values as bytes, and the
// runtimes hand them over as "ByteStrings": one character per byte (Deno's
// Request, undici's Headers and Node's http server alike). A client that sends
// a non-ASCII value sends it as UTF-8, so "ключ" arrives as eight characters
// such as "ÐºÐ»Ñ\u008eÑ\u0087". Decoding at the edge lets the rules count and
// store what the client meant.

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The header value decoded as UTF-8. A value that is not a byte string (some
 * code unit above 0xFF: already text) or not valid UTF-8 is returned as it is.
 */
export function headerText(value: string | null): string | null {
  if (value === null) return null;
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit > 0xff) return value;
    if (unit > 0x7f) ascii = false;
  }
  if (ascii) return value;
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) bytes[i] = value.charCodeAt(i);
  try {
    return utf8.decode(bytes);
  } catch {
    return value;
  }
}
