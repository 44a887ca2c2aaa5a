// API keys and the project a key authenticates (spec 5).

// The key modes are wire vocabulary (@sms/contract).
export { KEY_MODES, type KeyMode } from "@sms/contract";

/** What a request authenticated by an API key knows about its project. */
export type AuthenticatedProject = {
  id: string;
  sender: string | null;
  senderBrandId: number | null;
  claimed: boolean;
};
