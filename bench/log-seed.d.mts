export const SEED_MODELS: string[];
export const SEED_USERS: number;
export function seedLogsSql(o: { rows: number; now: number; spanDays?: number }): string;
