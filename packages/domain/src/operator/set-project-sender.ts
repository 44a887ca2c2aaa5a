// Operator: a project's approved sender (spec 1.5). Callers can never choose a
// sender; the operator sets one per project, or clears it back to the shared
// default. With live credentials the name and brand are checked against the
// provider's brand list (the brand must exist and be approved); without them a
// brand id must be given and is stored unchecked (the result says so).
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

export type SenderBrand = { id: number; name: string; approved: boolean };

/** The provider's list of sender brands (uBill's `listBrands()` fits). */
export type SenderBrandDirectory = {
  listBrands(): Promise<{ ok: true; brands: SenderBrand[] } | { ok: false; reason: string }>;
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
  if (!listed.ok) return { ok: false, code: "brand_check_failed", reason: listed.reason };
  const sameName = (brand: SenderBrand) => brand.name.toLowerCase() === name.toLowerCase();
  const notFound = (providerName: string | null, approvedIds: number[] = []): OperatorRefusal => ({
    ok: false,
    code: "brand_not_found",
    name,
    brandId: brandId ?? null,
    providerName,
    approvedIds,
  });
  let brand: SenderBrand | undefined;
  if (brandId !== undefined) {
    brand = listed.brands.find((candidate) => candidate.id === brandId);
    if (!brand) return notFound(null);
    if (!sameName(brand)) return notFound(brand.name);
  } else {
    const matches = listed.brands.filter(sameName);
    const approved = matches.filter((candidate) => candidate.approved);
    if (approved.length > 1)
      return notFound(
        null,
        approved.map((match) => match.id),
      );
    brand = approved[0] ?? matches[0];
    if (!brand) return notFound(null);
  }
  if (!brand.approved)
    return { ok: false, code: "brand_not_approved", brandId: brand.id, providerName: brand.name };
  return { ok: true, brand };
}

export async function setProjectSender(
  deps: OperatorDeps & {
    /** The provider's brand list; null when no live credentials are configured. */
    brands: SenderBrandDirectory | null;
  },
  input: OperatorInput & { projectId: string; name: string; brandId?: number },
): Promise<SetProjectSenderResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { projectId, name, brandId } = input;
  if (!SENDER_NAME_PATTERN.test(name)) return invalid("sender_name");
  if (brandId !== undefined && (!Number.isSafeInteger(brandId) || brandId <= 0)) return invalid("brand_id");
  if (!(await deps.store.projects.find(projectId))) return projectNotFound(projectId);

  let sender = name;
  let resolvedBrandId: number;
  let validated = false;
  if (deps.brands) {
    const resolved = await resolveBrand(deps.brands, name, brandId);
    if (!resolved.ok) return resolved;
    sender = resolved.brand.name;
    resolvedBrandId = resolved.brand.id;
    validated = true;
  } else {
    // No provider to ask: the brand id must be given.
    if (brandId === undefined) return invalid("brand_id");
    resolvedBrandId = brandId;
  }

  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<SetProjectSenderResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    const changed = project.sender !== sender || project.senderBrandId !== resolvedBrandId;
    if (changed) await tx.projects.setSender(projectId, sender, resolvedBrandId, now);
    await tx.audit.write({
      actor: input.actor,
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
  deps: OperatorDeps,
  input: OperatorInput & { projectId: string },
): Promise<ClearProjectSenderResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { projectId } = input;
  const now = deps.clock.now();
  return deps.store.transaction(async (tx): Promise<ClearProjectSenderResult> => {
    const project = await tx.projects.lock(projectId);
    if (!project) return projectNotFound(projectId);
    const changed = project.sender !== null || project.senderBrandId !== null;
    if (changed) await tx.projects.setSender(projectId, null, null, now);
    await tx.audit.write({
      actor: input.actor,
      action: "sender.cleared",
      projectId,
      details: { changed, previous: { sender: project.sender, brand_id: project.senderBrandId } },
      now,
    });
    return { ok: true, projectId, changed };
  });
}
