import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './schemas/tables/index.ts',
  out: './drizzle',
});
