/**
 * The engine's public API: what the worker, the CLI, the retry lab, scripts and tests import.
 * The UI imports only engine/types and the pure model (eslint.config.js keeps it so).
 */
export { Engine, type EngineOptions, type SetupState, type StepStatus } from './engine';
export { EngineInternalError } from './errors';
export { PgliteExecutor, type RawResult } from './pg/executor';
export { loadParser, onlyDrops, parseStatements, restorableSetup, type ParsedStatement } from './sql';
export * from './types';
