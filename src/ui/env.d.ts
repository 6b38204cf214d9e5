/// <reference types="vite/client" />

/** The lesson list's entries, built from lessons/*.yaml with the app (src/build/lessonCatalog.ts). */
declare module 'virtual:lesson-catalog' {
  export const entries: { path: string; info: import('./model/lessonInfo').LessonInfo }[];
  export const course: import('../scenario/course').Course | null;
  export const problems: string[];
}
