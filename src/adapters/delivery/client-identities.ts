import type { Socket } from "node:net";
import type { buildConnector } from "undici";

// Mutual TLS in the senders (ADR 22): connections that present a client certificate are pooled per
// identity (an endpoint's certificate and key), apart from every other connection, so a connection
// made with one endpoint's certificate is never used to reach another endpoint's receiver.

/** The code of the error a connection presenting a client certificate fails with when the receiver closes it unanswered. */
export const CLOSED_AFTER_CLIENT_CERTIFICATE = "ERR_TLS_CLOSED_AFTER_CLIENT_CERTIFICATE";

/**
 * Under TLS 1.3 the client's handshake ends before the receiver has checked the certificate, so a
 * refusal arrives after the request was written: as a TLS alert (bad_certificate, unknown_ca,
 * certificate_required, ...) and then the end of the stream, or, from receivers that do not send an
 * alert (Node's own HTTPS server), as the end alone. undici reports the end ("other side closed") and
 * loses the alert. This connector makes the socket fail with the alert itself, and a connection closed
 * by the receiver before it sent a single byte fail with CLOSED_AFTER_CLIENT_CERTIFICATE; both are
 * classified `tls_error`. A connection that has answered once is left to undici.
 */
export function reportingRefusals(
  connector: buildConnector.connector,
  presentsCertificate: boolean,
): buildConnector.connector {
  return (options, callback) =>
    connector(options, (err, socket) => {
      if (socket) watch(socket as Socket, presentsCertificate);
      // biome-ignore lint/suspicious/noExplicitAny: undici's callback overloads take (null, socket) | (err, null)
      (callback as (e: any, s: any) => void)(err, socket);
    });
}

function watch(socket: Socket, presentsCertificate: boolean): void {
  socket.on("error", (e: Error & { code?: string }) => {
    if (!socket.destroyed && e.code?.startsWith("ERR_SSL_")) socket.destroy(e);
  });
  if (!presentsCertificate) return;
  let answered = false;
  socket.on("readable", () => {
    if (socket.readableLength > 0) answered = true;
  });
  socket.on("end", () => {
    if (!answered && !socket.destroyed)
      socket.destroy(
        Object.assign(
          new Error(
            "the receiver closed the TLS connection before answering (it may have refused the client certificate)",
          ),
          { code: CLOSED_AFTER_CLIENT_CERTIFICATE },
        ),
      );
  });
}
