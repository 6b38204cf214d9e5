/**
 * The course as a path: lessons/course/course.yaml puts the lessons in the order to learn them (in
 * parts), names the first lesson for a first visit, defines tracks over the same lessons and
 * translates the topic tags. Data, never code. Reference: docs/lesson-format.md, "Course file".
 */
import { ID_RE, LessonError, load, type Lesson, type Localized, type Path } from './lesson';

/** A part of the course: a run of lessons on one theme, in order. */
export interface CoursePart {
  id: string;
  title: Localized;
  lessons: string[];
}

/** A track: a path through some of the lessons, in course order. */
export interface CourseTrack {
  id: string;
  title: Localized;
  description: Localized;
  /** Lesson ids in the order the track plays them (`all` in the file: every lesson of the course). */
  lessons: string[];
}

export interface Course {
  /** The lesson a first-time visitor should open. */
  start: string;
  parts: CoursePart[];
  tracks: CourseTrack[];
  /** Topic tag → its label in each language. */
  tags: Record<string, Localized>;
}

/**
 * Parses and validates the course file; throws LessonError listing every problem found.
 * When `lessonIds` is given, every lesson the file names must be one of them.
 */
export function parseCourse(yamlText: string, lessonIds?: readonly string[]): Course {
  const { value, c } = load(yamlText);
  const root = c.object(value, [], ['start', 'parts', 'tracks', 'tags'], []);
  if (!root) throw new LessonError(c.issues);

  const ref = (v: unknown, path: Path): string | undefined => {
    const id = c.text(v, path);
    if (id === undefined) return undefined;
    if (!ID_RE.test(id)) c.fail(path, `"${id}" must be a kebab-case lesson id`);
    else if (lessonIds && !lessonIds.includes(id)) c.fail(path, `unknown lesson "${id}" (there is no lessons/${id}.yaml)`);
    else return id;
    return undefined;
  };
  const idOf = (v: unknown, path: Path, seen: string[], what: string): string | undefined => {
    const id = c.text(v, path);
    if (id !== undefined && !ID_RE.test(id)) c.fail(path, `"${id}" must be kebab-case`);
    else if (id !== undefined && seen.includes(id)) c.fail(path, `duplicate ${what} "${id}"`);
    else return id;
    return undefined;
  };

  const start = ref(root.start, ['start']);

  const parts: CoursePart[] = [];
  const ordered: string[] = [];
  const pList = c.list(root.parts, ['parts']);
  if (pList && pList.length === 0) c.fail(['parts'], 'list at least one part');
  pList?.forEach((raw, i) => {
    const path: Path = ['parts', i];
    const o = c.object(raw, path, ['id', 'title', 'lessons'], []);
    if (!o) return;
    const id = idOf(
      o.id,
      [...path, 'id'],
      parts.map((p) => p.id),
      'part',
    );
    const title = c.localized(o.title, [...path, 'title']);
    const lessons: string[] = [];
    const list = c.list(o.lessons, [...path, 'lessons']);
    if (list && list.length === 0) c.fail([...path, 'lessons'], 'list at least one lesson');
    list?.forEach((x, j) => {
      const lid = ref(x, [...path, 'lessons', j]);
      if (lid === undefined) return;
      if (ordered.includes(lid)) c.fail([...path, 'lessons', j], `lesson "${lid}" is already in the course; list each lesson once`);
      else {
        lessons.push(lid);
        ordered.push(lid);
      }
    });
    if (id !== undefined && title) parts.push({ id, title, lessons });
  });
  if (start !== undefined && pList && !ordered.includes(start)) c.fail(['start'], `"${start}" is not in any part`);

  const tracks: CourseTrack[] = [];
  const tList = c.list(root.tracks, ['tracks']);
  if (tList && tList.length === 0) c.fail(['tracks'], 'list at least one track');
  tList?.forEach((raw, i) => {
    const path: Path = ['tracks', i];
    const o = c.object(raw, path, ['id', 'title', 'description', 'lessons'], []);
    if (!o) return;
    const id = idOf(
      o.id,
      [...path, 'id'],
      tracks.map((t) => t.id),
      'track',
    );
    const title = c.localized(o.title, [...path, 'title']);
    const description = c.localized(o.description, [...path, 'description']);
    let lessons: string[] = [];
    if (o.lessons === 'all') lessons = [...ordered];
    else {
      const list = c.list(o.lessons, [...path, 'lessons']);
      if (list && list.length === 0) c.fail([...path, 'lessons'], 'list at least one lesson, or write `all`');
      const picked = new Set<string>();
      list?.forEach((x, j) => {
        const lid = ref(x, [...path, 'lessons', j]);
        if (lid === undefined) return;
        if (picked.has(lid)) c.fail([...path, 'lessons', j], `duplicate lesson "${lid}"`);
        else if (pList && !ordered.includes(lid)) c.fail([...path, 'lessons', j], `"${lid}" is not in any part`);
        else picked.add(lid);
      });
      // A track plays its lessons in course order, whatever order the file lists them in.
      lessons = ordered.filter((l) => picked.has(l));
    }
    if (id !== undefined && title && description) tracks.push({ id, title, description, lessons });
  });

  const tags: Record<string, Localized> = {};
  if (!c.isObject(root.tags)) c.fail(['tags'], 'expected a mapping from topic tag to { en, ru }');
  else
    for (const [tag, label] of Object.entries(root.tags)) {
      if (!ID_RE.test(tag)) c.fail(['tags', tag], `"${tag}" must be a kebab-case topic tag`);
      const l = c.localized(label, ['tags', tag]);
      if (l) tags[tag] = l;
    }

  if (c.issues.length > 0) throw new LessonError(c.issues);
  return { start: start!, parts, tracks, tags };
}

/** Lesson ids in course order. */
export function courseOrder(course: Course): string[] {
  return course.parts.flatMap((p) => p.lessons);
}

/**
 * What the course file lacks for these lessons: each lesson that is in no part and each topic tag
 * with no translation, as a sentence saying exactly what to add to lessons/course/course.yaml.
 */
export function courseGaps(course: Course, lessons: readonly Pick<Lesson, 'id' | 'topics' | 'level'>[]): string[] {
  const out: string[] = [];
  const ordered = new Set(courseOrder(course));
  for (const l of lessons) {
    if (!ordered.has(l.id)) {
      out.push(
        `lessons/${l.id}.yaml is in no part of lessons/course/course.yaml: add "- ${l.id}" to the "lessons" of the part it belongs to ` +
          `(${course.parts.map((p) => p.id).join(', ')}), at its place in the course (its level is ${l.level})`,
      );
    }
  }
  const missing = [...new Set(lessons.flatMap((l) => l.topics))].filter((t) => !course.tags[t]);
  for (const tag of missing) {
    const users = lessons.filter((l) => l.topics.includes(tag)).map((l) => l.id);
    out.push(
      `topic tag "${tag}" (used by ${users.join(', ')}) has no translation: add "  ${tag}: { en: …, ru: … }" under "tags:" in lessons/course/course.yaml`,
    );
  }
  return out;
}
