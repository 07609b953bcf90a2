import { getMetadataStorage, IsInt, IsString, validateSync } from 'class-validator';
import { memoizeValidationMetadata } from './validation-metadata-memo';

class Parent {
  @IsString()
  name!: string;
}

const rulesOf = (cls: new () => object, groups?: string[]) =>
  getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false, groups);

describe('memoizeValidationMetadata', () => {
  beforeAll(() => memoizeValidationMetadata());

  it('answers a class again with the same frozen rules', () => {
    const first = rulesOf(Parent);
    expect(first.map((rule) => rule.propertyName)).toEqual(['name']);
    expect(rulesOf(Parent)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(rulesOf(Parent, ['admin'])).not.toBe(first);
  });

  it('sees a rule added after a lookup, and a class declared later with its inherited rules', () => {
    class Grown {
      @IsString()
      a!: string;
    }
    expect(rulesOf(Grown)).toHaveLength(1);
    IsInt()(Grown.prototype, 'b');
    expect(rulesOf(Grown).map((rule) => rule.propertyName)).toEqual(['a', 'b']);

    class Child extends Parent {
      @IsInt()
      age!: number;
    }
    expect(
      rulesOf(Child)
        .map((rule) => rule.propertyName)
        .sort(),
    ).toEqual(['age', 'name']);
    const invalid = Object.assign(new Child(), { name: 1, age: 'x' });
    expect(
      validateSync(invalid)
        .map((error) => error.property)
        .sort(),
    ).toEqual(['age', 'name']);
  });

  it('is installed once however often it is called', () => {
    const installed = getMetadataStorage().getTargetValidationMetadatas;
    memoizeValidationMetadata();
    expect(getMetadataStorage().getTargetValidationMetadatas).toBe(installed);
  });
});
