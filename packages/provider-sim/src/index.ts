export {
  createSimulatorProvider,
  DEFAULT_DELIVERY_DELAY_MS,
  SIMULATOR_NUMBERS,
  type SimulatorProviderOptions,
} from "./simulator.ts";
