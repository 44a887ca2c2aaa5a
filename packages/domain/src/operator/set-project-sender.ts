// Operator: a project's approved sender (spec 1.5). Callers can never choose a
// sender; the operator sets one per project, or clears it back to the shared
// default. With live credentials the name and brand are checked against the
// provider's brand list (the brand must exist and be approved); without them a
// brand id must be given and is stored unchecked (the result says so).
import {
  type OperatorDeps,
  type OperatorRefusal,
  PROJECT_NOT_FOUND,
  checkCommon,
  refuse,
  writeAuditEntry,
} from "./operator-support.ts";

export type SenderBrand = { id: number; name: string; approved: boolean };

/** The provider's list of sender brands (uBill's `listBrands()` fits). */
export type SenderBrandDirectory = {
  listBrands(): Promise<{ kind: "ok"; brands: SenderBrand[] } | { kind: "error"; reason: string }>;
};

/** An alphanumeric sender id: 1–11 characters, at least one letter. */
export const SENDER_NAME_PATTERN = /^(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9 .&_-]{0,9}[A-Za-z0-9.])?$/;

export type SetProjectSenderResult =
  | {
      ok: true;
      projectId: string;
      sender: string;
      brandId: number;
      /** True when the provider's brand list confirmed the brand. */
      validated: boolean;
      changed: boolean;
    }
  | OperatorRefusal;

export type ClearProjectSenderResult = { ok: true; projectId: string; changed: boolean } | OperatorRefusal;

async function resolveBrand(
  directory: SenderBrandDirectory,
  name: string,
  brandId: number | undefined,
): Promise<{ ok: true; brand: SenderBrand } | OperatorRefusal> {
  const listed = await directory.listBrands();
  if (listed.kind === "error") {
    return refuse(
      "brand_check_failed",
      `The provider's brand list could not be read (${listed.reason}); nothing changed.`,
    );
  }
  const sameName = (brand: SenderBrand) => brand.name.toLowerCase() === name.toLowerCase();
  let brand: SenderBrand | undefined;
  if (brandId !== undefined) {
    brand = listed.brands.find((candidate) => candidate.id === brandId);
    if (!brand) return refuse("brand_not_found", `The provider has no brand with id ${brandId}.`);
    if (!sameName(brand)) {
      return refuse(
        "brand_not_found",
        `Brand ${brandId} is named "${brand.name}" at the provider, not "${name}".`,
      );
    }
  } else {
    const matches = listed.brands.filter(sameName);
    const approved = matches.filter((candidate) => candidate.approved);
    if (approved.length > 1) {
      return refuse(
        "brand_not_found",
        `Several approved brands are named "${name}" (ids ${approved.map((m) => m.id).join(", ")}): pass --brand-id.`,
      );
    }
    brand = approved[0] ?? matches[0];
    if (!brand) return refuse("brand_not_found", `The provider has no brand named "${name}".`);
  }
  if (!brand.approved) {
    return refuse(
      "brand_not_approved",
      `Brand "${brand.name}" (id ${brand.id}) is not approved at the provider yet.`,
    );
  }
  return { ok: true, brand };
}

export async function setProjectSender(
  options: OperatorDeps & {
    projectId: string;
    name: string;
    brandId?: number;
    /** The provider's brand list; null when no live credentials are configured. */
    brands: SenderBrandDirectory | null;
  },
): Promise<SetProjectSenderResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { projectId, name, brandId } = options;
  if (!SENDER_NAME_PATTERN.test(name)) {
    return refuse(
      "invalid_input",
      "The sender name must be 1–11 characters (letters, digits, space . & _ -), start with a letter or digit and contain a letter.",
    );
  }
  if (brandId !== undefined && (!Number.isSafeInteger(brandId) || brandId <= 0)) {
    return refuse("invalid_input", "The brand id must be a positive whole number.");
  }
  const exists = await options.prisma.project.findUnique({ where: { id: projectId }, select: { id: true } });
  if (!exists) return PROJECT_NOT_FOUND(projectId);

  let sender = name;
  let resolvedBrandId: number;
  let validated = false;
  if (options.brands) {
    const resolved = await resolveBrand(options.brands, name, brandId);
    if (!resolved.ok) return resolved;
    sender = resolved.brand.name;
    resolvedBrandId = resolved.brand.id;
    validated = true;
  } else {
    if (brandId === undefined) {
      return refuse(
        "invalid_input",
        "No live provider credentials are configured, so the brand cannot be looked up: pass --brand-id too.",
      );
    }
    resolvedBrandId = brandId;
  }

  const now = options.clock.now();
  return options.prisma.$transaction(async (tx): Promise<SetProjectSenderResult> => {
    const project = await tx.project.findUnique({
      where: { id: projectId },
      select: { sender: true, senderBrandId: true },
    });
    if (!project) return PROJECT_NOT_FOUND(projectId);
    const changed = project.sender !== sender || project.senderBrandId !== resolvedBrandId;
    if (changed) {
      await tx.project.update({
        where: { id: projectId },
        data: { sender, senderBrandId: resolvedBrandId, updatedAt: now },
      });
    }
    await writeAuditEntry(tx, {
      actor: options.actor,
      action: "sender.set",
      projectId,
      details: {
        sender,
        brand_id: resolvedBrandId,
        validated,
        changed,
        previous: { sender: project.sender, brand_id: project.senderBrandId },
      },
      now,
    });
    return { ok: true, projectId, sender, brandId: resolvedBrandId, validated, changed };
  });
}

export async function clearProjectSender(
  options: OperatorDeps & { projectId: string },
): Promise<ClearProjectSenderResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { projectId } = options;
  const now = options.clock.now();
  return options.prisma.$transaction(async (tx): Promise<ClearProjectSenderResult> => {
    const project = await tx.project.findUnique({
      where: { id: projectId },
      select: { sender: true, senderBrandId: true },
    });
    if (!project) return PROJECT_NOT_FOUND(projectId);
    const changed = project.sender !== null || project.senderBrandId !== null;
    if (changed) {
      await tx.project.update({
        where: { id: projectId },
        data: { sender: null, senderBrandId: null, updatedAt: now },
      });
    }
    await writeAuditEntry(tx, {
      actor: options.actor,
      action: "sender.cleared",
      projectId,
      details: { changed, previous: { sender: project.sender, brand_id: project.senderBrandId } },
      now,
    });
    return { ok: true, projectId, changed };
  });
}
