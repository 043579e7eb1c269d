/** The limits of a workflow's tags (libs/contracts Tags; docs/workspace-api.md, "Limits"). */
export const TAG_LIMITS = { maxTags: 20, maxLength: 50 } as const;

/**
 * A line of tags as the tag editor takes it: separated by spaces or commas, each kept once, in the
 * order written; a problem when there are more than 20 or one is longer than 50 characters.
 */
export function parseTags(text: string): { tags: string[]; problem?: string } {
  const tags = [...new Set(text.split(/[\s,]+/).filter((t) => t !== ''))];
  const long = tags.find((t) => t.length > TAG_LIMITS.maxLength);
  if (long) return { tags, problem: `“${long.slice(0, 20)}…” is longer than ${TAG_LIMITS.maxLength} characters` };
  if (tags.length > TAG_LIMITS.maxTags) return { tags, problem: `At most ${TAG_LIMITS.maxTags} tags (${tags.length} here)` };
  return { tags };
}
