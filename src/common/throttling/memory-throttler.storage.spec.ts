import { MemoryThrottlerStorage } from './memory-throttler.storage';

describe('MemoryThrottlerStorage', () => {
  it('counts hits in a window and blocks past the limit for the block duration', async () => {
    const storage = new MemoryThrottlerStorage();
    const first = await storage.increment('10.0.0.1', 60_000, 2, 0, 'default');
    expect(first).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    expect((await storage.increment('10.0.0.1', 60_000, 2, 0, 'default')).isBlocked).toBe(false);
    const third = await storage.increment('10.0.0.1', 60_000, 2, 30_000, 'default');
    expect(third).toEqual({ totalHits: 3, timeToExpire: 60, isBlocked: true, timeToBlockExpire: 30 });
  });

  it('keeps clients and throttlers apart', async () => {
    const storage = new MemoryThrottlerStorage();
    await storage.increment('10.0.0.1', 60_000, 1, 0, 'default');
    expect((await storage.increment('10.0.0.2', 60_000, 1, 0, 'default')).totalHits).toBe(1);
    expect((await storage.increment('10.0.0.1', 60_000, 1, 0, 'auth')).totalHits).toBe(1);
    expect((await storage.increment('10.0.0.1', 60_000, 1, 0, 'default')).isBlocked).toBe(true);
  });

  it('starts a new window once the old one ends, and a block outlives it', async () => {
    const storage = new MemoryThrottlerStorage();
    await storage.increment('k', 40, 1, 0, 'default');
    expect((await storage.increment('k', 40, 1, 200, 'default')).isBlocked).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const next = await storage.increment('k', 40, 1, 200, 'default');
    expect(next).toMatchObject({ totalHits: 1, isBlocked: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await storage.increment('k', 40, 1, 200, 'default')).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
  });

  it('counts a window of 200,000 hits (the library storage spreads every hit into Math.min and throws there)', async () => {
    const storage = new MemoryThrottlerStorage();
    for (let i = 0; i < 200_000; i++) await storage.increment('k', 60_000, 10_000_000, 0, 'default');
    expect((await storage.increment('k', 60_000, 10_000_000, 0, 'default')).totalHits).toBe(200_001);
  });
});
