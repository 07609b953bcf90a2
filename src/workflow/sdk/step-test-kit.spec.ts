import { IsInt, IsString, Length, Max } from 'class-validator';
import { createStepTestContext, StepError } from './index';

class GreetConfig {
  @IsString() @Length(1, 20) channel: string;
  @IsString() text: string;
  @IsInt() @Max(3) times: number;
}

describe('step test kit: renderConfig', () => {
  it('renders every string against the scope, but the raw fields, and returns an instance of the config class', () => {
    const context = createStepTestContext({ input: { name: 'Ann' }, env: { TEAM: 'sales' } });
    const config = context.renderConfig(
      GreetConfig,
      { channel: '{{env.TEAM}}', text: 'Hello {{input.name}}', times: 2 },
      { rawFields: [] },
    );
    expect(config).toBeInstanceOf(GreetConfig);
    expect(config).toEqual({ channel: 'sales', text: 'Hello Ann', times: 2 });
    const raw = context.renderConfig(
      GreetConfig,
      { channel: 'c', text: '{{input.name}}', times: 1 },
      { rawFields: ['text'] },
    );
    expect(raw.text).toBe('{{input.name}}');
  });

  it('checks the rendered config as the engine does: an invalid or unknown field is INVALID_STEP_CONFIG', () => {
    const context = createStepTestContext({ input: { channel: 'x'.repeat(30) } });
    let thrown: unknown;
    try {
      context.renderConfig(GreetConfig, { channel: '{{input.channel}}', text: 't', times: 5, extra: true });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StepError);
    expect(thrown).toMatchObject({ code: 'INVALID_STEP_CONFIG', retryable: false });
    const fields = (
      thrown as StepError & { details: { validationErrors: { field: string }[] } }
    ).details.validationErrors
      .map((error) => error.field)
      .sort();
    expect(fields).toEqual(['config.channel', 'config.extra', 'config.times']);
  });
});
