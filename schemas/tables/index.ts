export * from './annotations.js';
export * from './cache-entries.js';
export * from './metric-points.js';
export * from './runs.js';
export * from './stages.js';
