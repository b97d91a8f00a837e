// Frappe's timespan values as inclusive date ranges, relative to a fixed day (a Wednesday in the middle of a quarter).
import { normalizeCondition } from '../../runtime/query/filter-values';
import { TIMESPANS, timespanRange } from '../../runtime/query/timespan';

const NOW = '2024-05-15';

test.each([
  ['today', ['2024-05-15', '2024-05-15']],
  ['yesterday', ['2024-05-14', '2024-05-14']],
  ['tomorrow', ['2024-05-16', '2024-05-16']],
  ['last 7 days', ['2024-05-08', '2024-05-15']],
  ['last 14 days', ['2024-05-01', '2024-05-15']],
  ['last 30 days', ['2024-04-15', '2024-05-15']],
  ['next 7 days', ['2024-05-15', '2024-05-22']],
  ['next 14 days', ['2024-05-15', '2024-05-29']],
  ['next 30 days', ['2024-05-15', '2024-06-14']],
  ['last week', ['2024-05-06', '2024-05-12']],
  ['this week', ['2024-05-13', '2024-05-19']],
  ['next week', ['2024-05-20', '2024-05-26']],
  ['last month', ['2024-04-01', '2024-04-30']],
  ['this month', ['2024-05-01', '2024-05-31']],
  ['next month', ['2024-06-01', '2024-06-30']],
  ['last quarter', ['2024-01-01', '2024-03-31']],
  ['this quarter', ['2024-04-01', '2024-06-30']],
  ['next quarter', ['2024-07-01', '2024-09-30']],
  ['last 6 months', ['2023-11-01', '2024-04-30']],
  ['next 6 months', ['2024-06-01', '2024-11-30']],
  ['last year', ['2023-01-01', '2023-12-31']],
  ['this year', ['2024-01-01', '2024-12-31']],
  ['next year', ['2025-01-01', '2025-12-31']],
])('%s', (span, range) => {
  expect(timespanRange(span, NOW)).toEqual(range);
});

test('every listed timespan has a range, case and spacing forgiven', () => {
  for (const span of TIMESPANS) expect(timespanRange(` ${span.toUpperCase()} `, NOW)).toHaveLength(2);
});

test('year and month boundaries: last month in January, this week across a year end', () => {
  expect(timespanRange('last month', '2024-01-10')).toEqual(['2023-12-01', '2023-12-31']);
  expect(timespanRange('this week', '2025-01-01')).toEqual(['2024-12-30', '2025-01-05']);
  expect(timespanRange('last quarter', '2024-02-29')).toEqual(['2023-10-01', '2023-12-31']);
});

test('anything else is a 400 DataError', () => {
  for (const bad of ['last century', '', 'today; drop table x', 7, null]) {
    expect(() => timespanRange(bad, NOW)).toThrow(
      expect.objectContaining({ status: 400, excType: 'DataError' }),
    );
  }
});

test.each([
  ['previous', '1 week', 'last week'],
  ['previous', '1 month', 'last month'],
  ['previous', '3 months', 'last quarter'],
  ['previous', '6 months', 'last 6 months'],
  ['previous', '1 year', 'last year'],
  ['next', '1 week', 'next week'],
  ['next', '3 months', 'next quarter'],
  ['next', '1 YEAR', 'next year'],
] as const)("Frappe's %s %s is the timespan %s", (op, period, span) => {
  expect(normalizeCondition('date', op, period, 'order_date')).toEqual({
    op: 'between',
    value: timespanRange(span),
  });
});

test('previous and next take only their five periods, on dates', () => {
  expect(() => normalizeCondition('date', 'previous', '2 weeks', 'order_date')).toThrow(
    /previous takes one of/,
  );
  expect(() => normalizeCondition('date', 'next', 7, 'order_date')).toThrow(/next takes one of/);
  expect(() => normalizeCondition('string', 'next', '1 week', 'title')).toThrow(/Date or Datetime/);
});
