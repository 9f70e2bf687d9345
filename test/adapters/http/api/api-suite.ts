import { asymmetricSignatureCases } from "./suite/asymmetric-signatures.ts";
import { authCases } from "./suite/auth.ts";
import { clientCertificateCases } from "./suite/client-certificates.ts";
import { type ApiTarget, suiteContext } from "./suite/context.ts";
import { controlCases } from "./suite/controls.ts";
import { deliveryCases } from "./suite/deliveries.ts";
import { erasureCases } from "./suite/erasures.ts";
import { errorCases } from "./suite/errors.ts";
import { eventBatchCases } from "./suite/event-batches.ts";
import { eventCases } from "./suite/events.ts";
import { filterCases } from "./suite/filters.ts";
import { operationCases } from "./suite/operations.ts";
import { tenancyCases } from "./suite/tenancy.ts";
import { testEventCases } from "./suite/test-events.ts";
import { webhookControlCases } from "./suite/webhook-controls.ts";
import { webhookCases } from "./suite/webhooks.ts";

export type { ApiTarget } from "./suite/context.ts";

/**
 * The API suite: every call of CONTRACT §4, erasures and settings (ADR 15), their errors, and tenancy. Runs against any target (the app
 * in-process, a Node server, a real Herald process on each runtime); one file per resource in suite/.
 */
export function apiSuite(makeTarget: () => Promise<ApiTarget>): void {
  const s = suiteContext(makeTarget);
  webhookCases(s);
  webhookControlCases(s);
  asymmetricSignatureCases(s);
  clientCertificateCases(s);
  controlCases(s);
  eventCases(s);
  eventBatchCases(s);
  deliveryCases(s);
  testEventCases(s);
  filterCases(s);
  erasureCases(s);
  tenancyCases(s);
  errorCases(s);
  authCases(s);
  operationCases(s);
}
