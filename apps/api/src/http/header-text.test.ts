import { expect, it } from "vitest";
import { headerText } from "./header-text.ts";

/** The value as a runtime hands it over: one character per byte of its UTF-8 encoding. */
const asByteString = (text: string) => String.fromCharCode(...new TextEncoder().encode(text));

it("decodes a UTF-8 header value that arrived as one character per byte", () => {
  const key = "ключ-".repeat(30);
  expect(asByteString(key)).toHaveLength(key.length * 2 - 30);
  expect(headerText(asByteString(key))).toBe(key);
  expect(headerText(asByteString("😀"))).toBe("😀");
});

it("keeps ASCII, text that is already decoded, and bytes that are not UTF-8", () => {
  expect(headerText("order-42")).toBe("order-42");
  expect(headerText("ключ")).toBe("ключ");
  expect(headerText("caf\u00e9")).toBe("caf\u00e9"); // a lone 0xE9 byte is not UTF-8
  expect(headerText(null)).toBeNull();
});
