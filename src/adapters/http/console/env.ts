import type { ConsoleSession, ConsoleUseCases } from "../../../app/console.ts";
import type { ConsoleInsights } from "../../../app/console-insights.ts";
import type { Logger } from "../../../app/logger.ts";

/** What the console and the customer portal need besides the API's use cases. */
export interface ConsoleDeps {
  use: ConsoleUseCases;
  insights: ConsoleInsights;
  /** Origins allowed to frame the portal (HERALD_PORTAL_FRAME_ANCESTORS); empty: none. */
  portalFrameAncestors: readonly string[];
  /** How often the live feed polls the store, in ms (default 1000). */
  livePollMs?: number;
}

/** The console (full project) or the customer portal (restricted). */
export type Mode = "console" | "portal";

export interface ConsoleEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    mode: Mode;
    /** /console or /portal: every link of a page starts with it. */
    base: string;
    session: ConsoleSession;
  };
}
