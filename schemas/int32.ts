import { z } from 'zod';

/** The largest value of PostgreSQL's `integer`, which a line number, attempt or seq is stored as. */
export const INT32_MAX = 2_147_483_647;

/** A whole number ≥ 0 that fits PostgreSQL's `integer`. */
export const NonNegativeInt32 = z.number().int().nonnegative().max(INT32_MAX);
