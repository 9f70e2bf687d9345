// What went wrong with a RabbitMQ destination, named from amqplib's errors.
import type { SendError } from "../../domain/delivery.ts";
import { classifyFailure } from "../delivery/classify.ts";

/**
 * Names what went wrong from amqplib's errors: the server's close codes (on the connection's handshake,
 * the connection or the channel, e.g. `Channel closed by server: 404 (NOT-FOUND) with message "..."`),
 * a nack, or a socket failure (classified as an HTTPS delivery's would be).
 */
export function amqpFailure(err: unknown): SendError {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const replyCode = typeof code === "number" ? code : Number(/: (\d{3}) \(/.exec(message)?.[1] ?? Number.NaN);
  if (message === "message nacked") return "broker_rejected";
  switch (replyCode) {
    case 403: // ACCESS_REFUSED: the login, or this user's permission on the exchange
      return "auth_error";
    case 404: // NOT_FOUND: the exchange
      return "destination_not_found";
    case 530: // NOT_ALLOWED: the vhost does not exist, or the user may not use it
      return /not found/i.test(message) ? "destination_not_found" : "auth_error";
    case 406: // PRECONDITION_FAILED: a message over max_message_size, or another refusal
      return /larger than|max(imum)? (message )?size/i.test(message)
        ? "message_too_large"
        : "broker_rejected";
    case 320: // CONNECTION_FORCED: the broker is stopping
    case 501: // FRAME_ERROR
    case 505: // UNEXPECTED_FRAME
    case 541: // INTERNAL_ERROR
      return "connection_error";
  }
  if (Number.isInteger(replyCode)) return "broker_rejected";
  return classifyFailure(err);
}
