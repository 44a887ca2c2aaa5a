import { describe, expect, it } from "vitest";
import { readBalance, readBrands, readReportStatus, readSmsId, readStatusId } from "./parse.ts";

describe("readStatusId", () => {
  it("reads numbers and numeric strings", () => {
    expect(readStatusId({ statusID: 0 })).toBe(0);
    expect(readStatusId({ statusID: "40" })).toBe(40);
  });
  it("answers null for anything else", () => {
    for (const body of [
      undefined,
      null,
      [],
      "0",
      {},
      { statusID: null },
      { statusID: "x" },
      { statusID: 1.5 },
    ]) {
      expect(readStatusId(body)).toBeNull();
    }
  });
});

describe("readSmsId", () => {
  it("reads the id as a string whether uBill sends a string or a number", () => {
    expect(readSmsId({ statusID: 0, smsID: "117345" })).toBe("117345");
    expect(readSmsId({ statusID: 0, smsID: 117345 })).toBe("117345");
  });
  it("refuses a missing, empty or path-like id", () => {
    for (const smsID of [undefined, "", "../balance", "a/b", "1 2", 1.5, {}]) {
      expect(readSmsId({ statusID: 0, smsID })).toBeNull();
    }
  });
});

describe("readReportStatus", () => {
  const number = "995599123456";
  it("finds the line of our number", () => {
    const body = {
      statusID: 0,
      result: [
        { number: "995599000000", statusID: "2" },
        { number: "995599123456", statusID: "1" },
      ],
    };
    expect(readReportStatus(body, number)).toEqual({ kind: "status", status: "1" });
  });
  it("tolerates numeric numbers and statuses", () => {
    expect(readReportStatus({ result: [{ number: 995599123456, statusID: 3 }] }, number)).toEqual({
      kind: "status",
      status: "3",
    });
  });
  it("takes a single line without any number as ours", () => {
    expect(readReportStatus({ result: [{ statusID: "4" }] }, number)).toEqual({
      kind: "status",
      status: "4",
    });
  });
  it("does not trust a line for another number", () => {
    expect(readReportStatus({ result: [{ number: "995599000000", statusID: "1" }] }, number)).toEqual({
      kind: "unreadable",
    });
  });
  it("treats an empty result as not reported yet", () => {
    expect(readReportStatus({ statusID: 0, result: [] }, number)).toEqual({ kind: "not_yet" });
  });
  it("answers unreadable without a result list or status", () => {
    expect(readReportStatus({ statusID: 0 }, number)).toEqual({ kind: "unreadable" });
    expect(readReportStatus({ result: [{ number }] }, number)).toEqual({ kind: "unreadable" });
  });
});

describe("readBrands", () => {
  it("reads the SDK's shape (string ids, authorized 1/2)", () => {
    const body = {
      statusID: 0,
      brands: [
        { id: "12", name: "SMSGE", authorized: "1", createdAt: "2024-01-15 12:00:00" },
        { id: "13", name: "Pending", authorized: "2", createdAt: "2024-02-01 08:00:00" },
      ],
    };
    expect(readBrands(body)).toEqual([
      { id: 12, name: "SMSGE", approved: true },
      { id: 13, name: "Pending", approved: false },
    ]);
  });
  it("reads the other plausible shape (numeric ids, a status word)", () => {
    const body = {
      statusID: 0,
      brands: [
        { id: 1, name: "MyShop", status: "approved" },
        { id: 2, name: "Other", status: "pending" },
        { brandID: 3, brandName: "Third", approved: true },
      ],
    };
    expect(readBrands(body)).toEqual([
      { id: 1, name: "MyShop", approved: true },
      { id: 2, name: "Other", approved: false },
      { id: 3, name: "Third", approved: true },
    ]);
  });
  it("skips entries it cannot use and answers null without a list", () => {
    expect(readBrands({ brands: [null, { id: "x", name: "A" }, { id: 4 }, { id: 5, name: "Ok" }] })).toEqual([
      { id: 5, name: "Ok", approved: false },
    ]);
    expect(readBrands({ statusID: 0 })).toBeNull();
    expect(readBrands(undefined)).toBeNull();
  });
});

describe("readBalance", () => {
  it("reads a number or a numeric string", () => {
    expect(readBalance({ statusID: 0, sms: 123 })).toBe(123);
    expect(readBalance({ statusID: 0, sms: "456" })).toBe(456);
    expect(readBalance({ statusID: 0, balance: "12.5" })).toBe(12.5);
  });
  it("answers null when there is no usable count", () => {
    expect(readBalance({ statusID: 0 })).toBeNull();
    expect(readBalance({ statusID: 0, sms: "many" })).toBeNull();
    expect(readBalance(undefined)).toBeNull();
  });
});
