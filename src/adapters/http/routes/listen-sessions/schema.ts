import { z } from "@hono/zod-openapi";
import { RESPONSE_BODY_LIMIT } from "../../../../domain/delivery.ts";
import { intRange, uuidParam } from "../shared.ts";
import { description, events } from "../webhooks/fields.ts";

export const CreateListenSessionSchema = z
  .strictObject({
    events,
    description: description.optional(),
  })
  .openapi("CreateListenSessionRequest");

export const ListenSessionIdParams = z.object({
  id: uuidParam("id", "The listen session's endpoint id (the `id` its creation answered)."),
});

export const ListenAnswerSchema = z
  .strictObject({
    message_id: z.uuid().openapi({ description: "The `id` of the `delivery` event being answered." }),
    status: intRange(100, 599).openapi({
      description:
        "The delivery's response status: the forward target's, or 2xx when the CLI only printed it.",
    }),
    body: z
      .string()
      .max(RESPONSE_BODY_LIMIT)
      .nullable()
      .optional()
      .openapi({ description: "The response body recorded with the attempt (at most 4096 characters)." }),
  })
  .openapi("ListenAnswerRequest");
