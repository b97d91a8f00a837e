// now() is the text a document's creation/modified are answered with; read back, it must be the same text.
import { formatDatetime, now } from '../../runtime/db/stored-values';

test('a timestamp taken on a whole second reads back as the same text', () => {
  const spy = jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2031, 0, 2, 3, 4, 5));
  try {
    const stamp = now();
    expect(stamp.startsWith('2031-01-02 03:04:05.')).toBe(true);
    expect(formatDatetime(stamp)).toBe(stamp);
  } finally {
    spy.mockRestore();
  }
});

test('timestamps stay strictly increasing within the process', () => {
  const stamps = Array.from({ length: 1000 }, () => now());
  for (let i = 1; i < stamps.length; i++) expect(stamps[i]! > stamps[i - 1]!).toBe(true);
});
