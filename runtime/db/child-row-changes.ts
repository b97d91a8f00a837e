// What a save does to one Table field's stored rows, shared by the row stores of both backends.
import type { DocData } from './row-store';

/** The row names stored before the save (`stored`), and those of them the saved rows (`rows`) leave out. */
export function childRowChanges(
  stored: DocData[] | undefined,
  rows: readonly DocData[],
): { before: Set<string>; removed: string[] } {
  const before = new Set((stored ?? []).map((r) => String(r.name)));
  const kept = new Set(rows.map((r) => String(r.name)));
  return { before, removed: [...before].filter((name) => !kept.has(name)) };
}
