import { Module } from '@nestjs/common';
import { IsString, Length } from 'class-validator';
import type { StepOutcome, WorkflowStepHandler } from '../../src/workflow/sdk/step-handler';
import { WorkflowStep } from '../../src/workflow/sdk/workflow-step.decorator';

export class GateConfig {
  @IsString() @Length(1, 50) gate: string;
}

/**
 * A replayable step with an effect (as far as the runner knows) that waits until the test opens its
 * gate: lets a test act (cancel, kill) while a run is inside a step of this kind.
 */
@WorkflowStep({ type: 'gate', config: GateConfig, replayable: true, description: 'Waits for the test' })
export class GateStep implements WorkflowStepHandler<GateConfig, { gate: string }> {
  private static readonly waiting = new Map<string, () => void>();

  /** Opens the gate a step is waiting at; false when no step waits there (yet). */
  static open(gate: string): boolean {
    const release = GateStep.waiting.get(gate);
    GateStep.waiting.delete(gate);
    release?.();
    return release !== undefined;
  }

  static isWaiting(gate: string): boolean {
    return GateStep.waiting.has(gate);
  }

  async execute(_context: unknown, config: GateConfig): Promise<StepOutcome<{ gate: string }>> {
    await new Promise<void>((resolve) => GateStep.waiting.set(config.gate, resolve));
    return { result: { gate: config.gate } };
  }
}

/**
 * The same gate as a pure step (computes, no effect, as far as the runner knows): lets a test act
 * while a run is inside a pure step that takes longer than a caller check holds.
 */
@WorkflowStep({
  type: 'pure-gate',
  config: GateConfig,
  replayable: true,
  pure: true,
  description: 'Waits for the test',
})
export class PureGateStep extends GateStep {}

@Module({ providers: [GateStep, PureGateStep] })
export class GateStepModule {}
