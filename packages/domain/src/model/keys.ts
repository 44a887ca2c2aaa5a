// API keys and the project a key authenticates (spec 5).

export const KEY_MODES = ["test", "live"] as const;
export type KeyMode = (typeof KEY_MODES)[number];

/** What a request authenticated by an API key knows about its project. */
export type AuthenticatedProject = {
  id: string;
  sender: string | null;
  senderBrandId: number | null;
  claimed: boolean;
};
