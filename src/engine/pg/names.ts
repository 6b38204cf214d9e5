/** Names of the engine's own objects inside PGlite (no imports: shared by executor modules). */

/** Schema holding pageinspect and the engine's helper objects; never on a user's search_path. */
export const INTERNAL_SCHEMA = 'lockstep';
/** Schema whose functions shadow pg_catalog's pg_try_advisory_* so they see other sessions' advisory locks. */
export const ADVISORY_SHADOW_SCHEMA = 'lockstep_shadow';
/** Other sessions' advisory locks, filled inside a dry run (rolled back with it). */
export const OTHERS_ADVISORY = `${INTERNAL_SCHEMA}.others_advisory`;
/** Where row-image replay registers the current ctids of the versions a session created, under their version ids (see images.ts). */
export const CTID_MAP = `${INTERNAL_SCHEMA}.ctid_map`;
/** Schema whose functions shadow the waiting advisory lock functions to note the order of a statement's locks (advisoryOrder.ts). */
export const ADVISORY_ORDER_SCHEMA = 'lockstep_order';
/** The transaction-local setting those notes go into. */
export const ADVISORY_MARKS_GUC = 'lockstep.advisory_marks';
