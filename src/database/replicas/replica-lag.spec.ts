import { PrimaryPositionHistory } from './replica-lag';

describe('a replica lag, measured against the primary positions', () => {
  it('is 0 at the newest position, else the age of the newest position replayed; unknown before any', () => {
    const history = new PrimaryPositionHistory(10_000);
    expect(history.lagOf(5n, 1000)).toBeNull();
    history.add(100n, 1000);
    history.add(100n, 1250);
    history.add(180n, 1500);
    history.add(250n, 1750);
    expect(history.lagOf(250n, 2000)).toBe(0);
    expect(history.lagOf(300n, 2000)).toBe(0);
    // Replayed 180 but not 250: it holds everything the primary had at 1500.
    expect(history.lagOf(200n, 2000)).toBe(500);
    // Before the first change: it holds what the primary had at 1250, the last reading at 100.
    expect(history.lagOf(100n, 2000)).toBe(750);
    // Behind every reading kept: unknown (further behind than they reach).
    expect(history.lagOf(99n, 2000)).toBeNull();
  });

  it('drops readings older than it keeps, but always keeps the newest', () => {
    const history = new PrimaryPositionHistory(1000);
    history.add(10n, 0);
    history.add(20n, 500);
    history.add(30n, 1400);
    expect(history.lagOf(10n, 1700)).toBeNull();
    expect(history.lagOf(20n, 1700)).toBe(1200);
    history.add(30n, 5000);
    expect(history.newest).toBe(30n);
    expect(history.lagOf(20n, 5000)).toBeNull();
  });
});
