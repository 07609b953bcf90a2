import type { formConfigs } from '../database/schema';

/** A stored configuration as the repositories read it (one home, so neither imports the other). */
export type ConfigRow = typeof formConfigs.$inferSelect;
