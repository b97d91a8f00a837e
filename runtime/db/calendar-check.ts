// The calendar test of a type change to Date or Datetime, for the backends whose check is a pattern (MariaDB,
// PostgreSQL): text of the right shape that names no real day or time (2024-02-30, 2024-13-01, 24:00) would fail the
// ALTER itself, so the planner's checks count it with the rest, before the first statement runs.

/**
 * SQL that is true when the text `c`, known to have the shape `YYYY-MM-DD[ HH:MM[:SS…]]`, names no real day (or, with
 * `withTime`, no real time of day). `int` is the dialect's name of an integer cast.
 */
export function impossibleDateSql(c: string, int: 'integer' | 'signed', withTime: boolean): string {
  // `length` counts characters on SQLite and PostgreSQL and bytes on MariaDB: the same for text of this shape.
  const part = (from: number, length: number) => `cast(substr(${c}, ${from}, ${length}) as ${int})`;
  const [y, m, d] = [part(1, 4), part(6, 2), part(9, 2)];
  const leap = `((${y} % 4 = 0 and ${y} % 100 <> 0) or ${y} % 400 = 0)`;
  const days = `(case when ${m} in (4, 6, 9, 11) then 30 when ${m} = 2 then (case when ${leap} then 29 else 28 end) else 31 end)`;
  const day = `${y} < 1 or ${m} not between 1 and 12 or ${d} < 1 or ${d} > ${days}`;
  if (!withTime) return `(${day})`;
  const time = `(length(${c}) > 10 and (${part(12, 2)} > 23 or ${part(15, 2)} > 59 or (length(${c}) > 16 and ${part(18, 2)} > 59)))`;
  return `(${day} or ${time})`;
}
