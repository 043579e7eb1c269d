import { describe, expect, it } from 'vitest';
import { parseTags } from './tags.ts';

describe('parseTags', () => {
  it('splits on spaces and commas, keeps each once in the order written', () => {
    expect(parseTags('  billing, eu  billing,,ops ')).toEqual({ tags: ['billing', 'eu', 'ops'] });
    expect(parseTags('')).toEqual({ tags: [] });
  });
  it('says what is wrong with too many or too long tags', () => {
    expect(parseTags('x'.repeat(51)).problem).toMatch(/longer than 50 characters/);
    expect(parseTags(Array.from({ length: 21 }, (_, i) => `t${i}`).join(' ')).problem).toBe('At most 20 tags (21 here)');
  });
});
