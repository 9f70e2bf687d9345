/** Orders documents fetched with `$in` as the ids were asked for, dropping absent ones. */
export function inOrderOf<T extends { _id: string }>(ids: readonly string[], docs: readonly T[]): T[] {
  const byId = new Map(docs.map((d) => [d._id, d]));
  return ids.flatMap((id) => {
    const d = byId.get(id);
    return d ? [d] : [];
  });
}
