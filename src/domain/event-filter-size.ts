import { FILTER_LIMITS, type FilterIssue, type Segment } from "./event-filter.ts";

/**
 * The first way a filter breaks the size limits (bytes, depth, members, string lengths), or null.
 * Iterative and stopping at the first problem, so no nesting can exhaust the stack.
 */
export function sizeProblem(filter: unknown): FilterIssue | null {
  const L = FILTER_LIMITS;
  const stack: { value: unknown; path: Segment[]; depth: number }[] = [{ value: filter, path: [], depth: 1 }];
  let members = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string" && value.length > L.maxStringLength) {
      return { path, message: `must be at most ${L.maxStringLength} characters long` };
    }
    if (value === null || typeof value !== "object") continue;
    if (depth > L.maxDepth)
      return { path, message: `nests too deeply: a filter may nest at most ${L.maxDepth} levels` };
    const entries: [Segment, unknown][] = Array.isArray(value)
      ? value.map((item, i) => [i, item])
      : Object.entries(value);
    members += entries.length;
    if (members > L.maxMembers) {
      return { path: [], message: `must hold at most ${L.maxMembers} keys and array items in all` };
    }
    for (const [key, item] of entries) {
      if (typeof key === "string" && key.length > L.maxStringLength) {
        return { path, message: `has a key longer than ${L.maxStringLength} characters` };
      }
      stack.push({ value: item, path: [...path, key], depth: depth + 1 });
    }
  }
  // Measured once the shape is known to be small, so serialising it cannot overflow the stack.
  if (new TextEncoder().encode(JSON.stringify(filter)).length > L.maxBytes) {
    return { path: [], message: `must be at most ${L.maxBytes} bytes as JSON` };
  }
  return null;
}
