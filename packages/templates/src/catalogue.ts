// The built-in template catalogue, exactly as spec section 2.6 states it.
// Message text is never free-form: every SMS the service sends is one of these
// texts with its `{variable}` placeholders filled in.

export const TEMPLATE_IDS = ["verification_code", "login_code", "password_reset_code"] as const;
export type TemplateId = (typeof TEMPLATE_IDS)[number];

export const LOCALES = ["ka", "en"] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE = "ka" satisfies Locale;

/** Every variable any template uses. A new one also needs a rule in `variables.ts`. */
export const VARIABLE_NAMES = ["code", "minutes"] as const;
export type VariableName = (typeof VARIABLE_NAMES)[number];

export type TemplateDefinition = {
  /** The variables the template takes, in the order they are checked and reported. */
  readonly variables: readonly VariableName[];
  /** The text per locale, with `{variable}` placeholders. */
  readonly text: { readonly [L in Locale]: string };
};

export const TEMPLATES = deepFreeze({
  verification_code: {
    variables: ["code"],
    text: {
      en: "Your verification code is {code}. Do not share it with anyone.",
      ka: "თქვენი დამადასტურებელი კოდია {code}. არავის გაუზიაროთ.",
    },
  },
  login_code: {
    variables: ["code"],
    text: {
      en: "Your sign-in code is {code}. If you did not request it, ignore this message.",
      ka: "შესვლის კოდი: {code}. თუ არ მოგითხოვიათ, გამოტოვეთ ეს შეტყობინება.",
    },
  },
  password_reset_code: {
    variables: ["code", "minutes"],
    text: {
      en: "Your password reset code is {code}. It expires in {minutes} minutes.",
      ka: "პაროლის აღდგენის კოდი: {code}. მოქმედებს {minutes} წუთი.",
    },
  },
} as const satisfies Record<TemplateId, TemplateDefinition>);

export function isTemplateId(value: unknown): value is TemplateId {
  return typeof value === "string" && (TEMPLATE_IDS as readonly string[]).includes(value);
}

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/** `verification_code, login_code, password_reset_code`: for error messages. */
export const TEMPLATE_ID_LIST = TEMPLATE_IDS.join(", ");

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
