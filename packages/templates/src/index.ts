// @sms/templates: the message catalogue, its variable rules, rendering and SMS segment
// counting (spec section 2.6). Pure: no I/O. The package's only entry point.

export {
  DEFAULT_LOCALE,
  LOCALES,
  type Locale,
  TEMPLATE_IDS,
  TEMPLATES,
  type TemplateDefinition,
  type TemplateId,
  VARIABLE_NAMES,
  type VariableName,
} from "./catalogue.ts";
export { type RenderInput, type RenderResult, renderMessage } from "./render.ts";
export { countSegments, type MessageEncoding, SEGMENT_LIMITS, type SegmentCount } from "./segments.ts";
export {
  type ScreenFinding,
  screenValue,
  VARIABLE_PATTERNS,
  VARIABLE_RULES,
  type VariableRule,
  type VariablesCheck,
  validateVariables,
} from "./variables.ts";
