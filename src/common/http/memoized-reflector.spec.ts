import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MemoizedReflector } from './memoized-reflector';

const ROLE = 'role';
const Flagged = Reflector.createDecorator<string, string>({ transform: (value) => `flag:${value}` });

@SetMetadata(ROLE, 'class')
class Controller {
  @SetMetadata(ROLE, 'handler')
  overridden(): void {}

  inherited(): void {}

  @Flagged('on')
  flagged(): void {}
}

describe('MemoizedReflector', () => {
  const plain = new Reflector();
  const { overridden, inherited, flagged } = Controller.prototype;

  it('answers as Nest does: the handler over the class, undefined for what is not set, decorators transformed', () => {
    const memoized = new MemoizedReflector();
    for (const reflector of [plain, memoized, memoized] as Reflector[]) {
      expect(reflector.getAllAndOverride(ROLE, [overridden, Controller])).toBe('handler');
      expect(reflector.getAllAndOverride(ROLE, [inherited, Controller])).toBe('class');
      expect(reflector.getAllAndOverride('absent', [inherited, Controller])).toBeUndefined();
      expect(reflector.get(Flagged, flagged)).toBe('flag:on');
      expect(reflector.getAll(ROLE, [overridden, inherited, Controller])).toEqual([
        'handler',
        undefined,
        'class',
      ]);
    }
  });

  it('reads each target and key from reflect-metadata once, an absent one included', () => {
    const memoized = new MemoizedReflector();
    const read = jest.spyOn(Reflect, 'getMetadata');
    try {
      for (let i = 0; i < 3; i++) {
        memoized.getAllAndOverride(ROLE, [inherited, Controller]);
        memoized.getAllAndOverride('absent', [inherited, Controller]);
      }
      expect(read).toHaveBeenCalledTimes(4);
    } finally {
      read.mockRestore();
    }
  });
});
