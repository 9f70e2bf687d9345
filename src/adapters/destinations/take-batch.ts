/**
 * Takes the next request's share off the head of a queue (the Kafka and SQS batchers): at least one
 * item, then as many as fit in `maxItems` and `maxBytes` together, in order.
 */
export function takeBatch<T>(
  queue: T[],
  maxItems: number,
  maxBytes: number,
  bytes: (item: T) => number,
): T[] {
  let total = 0;
  let n = 0;
  while (n < queue.length && n < maxItems) {
    const size = bytes(queue[n] as T);
    if (n > 0 && total + size > maxBytes) break;
    total += size;
    n++;
  }
  return queue.splice(0, n);
}
