// "Send a test message" from the project page (views/try.ts).
import { IDEMPOTENCY_KEY_MAX_LENGTH, idempotencyKeyProblem } from "@sms/contract";
import { LOCALES, TEMPLATE_IDS, type TemplateId } from "@sms/templates";
import type { PageState } from "../port.ts";
import { notFoundPage } from "../views/problems.ts";
import { curlLine, type TryValues, triedPage, tryPage } from "../views/try.ts";
import { type DashboardContext, param } from "./context.ts";

/** The form's template and locale, when both are the catalogue's. */
function isCatalogued(
  values: TryValues,
): values is TryValues & { template: TemplateId; locale: (typeof LOCALES)[number] } {
  return (
    (TEMPLATE_IDS as readonly string[]).includes(values.template) &&
    (LOCALES as readonly string[]).includes(values.locale)
  );
}

export function tryRoutes<S extends PageState>({ route, port }: DashboardContext<S>) {
  const recipients = port.config.simulatorNumbers;

  const form = route("GET", "/dashboard/projects/{project_id}/try", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    // The form is the project's own page: 404 for a project that is not the viewer's.
    await context.procedures.dashboard.projects.spending({ project_id: projectId });
    return tryPage(context.chrome, { projectId, recipients, idempotencyKey: crypto.randomUUID() });
  });

  const send = route("POST", "/dashboard/projects/{project_id}/try", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const field = (name: string, max: number) => (context.form.get(name) ?? "").trim().slice(0, max);
    const values: TryValues = {
      template: field("template", 64),
      locale: field("locale", 8),
      code: field("code", 64),
      minutes: field("minutes", 16),
      to: field("to", 40),
    };
    // The API's rule (1–200 characters): an empty key gets a fresh one, a longer one is refused, never cut.
    const idempotencyKey = (context.form.get("idempotency_key") ?? "").trim() || crypto.randomUUID();
    const variables: Record<string, string> = { code: values.code };
    if (values.template === "password_reset_code") variables.minutes = values.minutes;
    const result =
      idempotencyKeyProblem(idempotencyKey) === "too_long"
        ? {
            ok: false as const,
            code: "idempotency_key_too_long",
            message: `The Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
          }
        : await context.procedures.dashboard.messages.sendTest({
            project_id: projectId,
            idempotency_key: idempotencyKey,
            to: values.to,
            template: values.template,
            locale: values.locale,
            variables,
          });
    if (!result.ok) {
      if (result.code === "project_not_found") return notFoundPage(context.chrome);
      // A new key for the corrected form: the refused one stays refused.
      return tryPage(context.chrome, {
        projectId,
        recipients,
        idempotencyKey: crypto.randomUUID(),
        values,
        problem: { code: result.code, message: result.message },
        status: 400,
      });
    }
    return triedPage(context.chrome, {
      projectId,
      messageId: result.message_id,
      status: result.status,
      replayed: result.replayed,
      liveRecipient: result.live_recipient,
      ...(isCatalogued(values) ? { sent: { template: values.template, locale: values.locale } } : {}),
      curl: curlLine({
        baseUrl: port.config.publicBaseUrl,
        idempotencyKey,
        values,
        publicNumbers: recipients.map((recipient) => recipient.number),
      }),
    });
  });

  return [form, send];
}
