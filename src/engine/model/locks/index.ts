/** The pure lock model: modes and conflict tables, the lock table, the deadlock detector, messages. */
export * from './types';
export * from './modes';
export * from './lockManager';
export { deadLockCheck, rememberSimpleDeadLock } from './deadlock';
export type { DeadLockState, WaitOrder } from './deadlock';
export * from './describe';
