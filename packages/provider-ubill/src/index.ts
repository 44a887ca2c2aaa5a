export {
  createUbillProvider,
  DEFAULT_STATUS_TIMEOUT_MS,
  DEFAULT_SUBMIT_TIMEOUT_MS,
  type UbillBalanceResult,
  type UbillBrand,
  type UbillBrandsResult,
  type UbillProvider,
  type UbillProviderOptions,
} from "./ubill-provider.ts";
