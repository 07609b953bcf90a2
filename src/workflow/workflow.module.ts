import { StepFilesModule } from './sdk/step-files.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { ConditionalRequests } from '../common/http/conditional-requests';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataModule } from '../data/data.module';
import { MailModule } from '../mail/mail.module';
import { PermissionsModule } from '../permissions/permissions.module';
import { RolesModule } from '../roles/roles.module';
import { SitesModule } from '../sites/sites.module';
import { UsersModule } from '../users/users.module';
import { EffectDispatcher } from './effects/effect-dispatcher.service';
import { EffectRegistry } from './effects/effect-registry.service';
import { MailEffectSender } from './effects/mail-effect.sender';
import { WorkflowEffectsRepository } from './effects/workflow-effects.repository';
import { CompiledDefinitions } from './engine/compiled-definitions';
import { Compensator } from './engine/driver/compensator';
import { RunDriver } from './engine/driver/run-driver';
import { RunLauncher } from './engine/run-launcher';
import { StepExecutor } from './engine/driver/step-executor';
import { RunCaller } from './engine/run-caller';
import { StepRegistry } from './engine/step-registry.service';
import { WorkflowClock } from './engine/workflow-clock';
import { newInstanceName, WORKFLOW_INSTANCE } from './engine/queue/workflow-instance';
import { WorkflowRunRetention } from './engine/queue/workflow-run-retention';
import { WorkflowQueueWorker } from './engine/queue/workflow-queue.worker';
import { WorkflowRunner } from './engine/workflow-runner.service';
import { ApiStepModule } from './steps/api/api-step.module';
import { ApprovalStepModule } from './steps/approval/approval-step.module';
import { ConditionalStepModule } from './steps/conditional/conditional-step.module';
import { NotifyStepModule } from './steps/notify/notify-step.module';
import { SaveStepModule } from './steps/save/save-step.module';
import { TransformStepModule } from './steps/transform/transform-step.module';
import { ValidateStepModule } from './steps/validate/validate-step.module';
import { WorkflowTriggerConsumer } from './triggers/workflow-trigger.consumer';
import { WorkflowDefinitionValidator } from './definitions/workflow-definition.validator';
import { WorkflowGauges } from './workflow-gauges';
import { WorkflowMetrics } from './workflow-metrics';
import { RunJournalRepository } from './engine/journal/run-journal.repository';
import { RunQueueRepository } from './engine/queue/run-queue.repository';
import { RunHistoryRepository } from './runs/run-history.repository';
import { RunOperationProcessor } from './runs/operations/run-operation.processor';
import { RunOperationsController } from './runs/operations/run-operations.controller';
import { RunOperationsRepository } from './runs/operations/run-operations.repository';
import { RunOperationsService } from './runs/operations/run-operations.service';
import { RunDecisionsService } from './runs/run-decisions.service';
import { RunErasure } from './runs/run-erasure.service';
import { WorkflowRunsService } from './runs/workflow-runs.service';
import { WorkflowsController } from './workflows.controller';
import { WorkflowVersionsController } from './definitions/workflow-versions.controller';
import { WorkflowsRepository } from './definitions/workflows.repository';
import { WorkflowsService } from './definitions/workflows.service';

/** The built-in step types, each a module of its own, registered exactly as a third party's would be. */
export const BUILT_IN_STEP_MODULES = [
  ValidateStepModule,
  SaveStepModule,
  NotifyStepModule,
  ApiStepModule,
  TransformStepModule,
  ConditionalStepModule,
  ApprovalStepModule,
];

@Module({
  imports: [
    DiscoveryModule,
    IdempotencyModule,
    DataModule,
    AttachmentsModule,
    StepFilesModule,
    PermissionsModule,
    MailModule,
    SitesModule,
    RolesModule,
    UsersModule,
    ...BUILT_IN_STEP_MODULES,
  ],
  controllers: [WorkflowsController, RunOperationsController, WorkflowVersionsController],
  providers: [
    StepRegistry,
    CompiledDefinitions,
    WorkflowClock,
    RunCaller,
    RunLauncher,
    StepExecutor,
    Compensator,
    RunDriver,
    WorkflowRunner,
    EffectRegistry,
    EffectDispatcher,
    WorkflowTriggerConsumer,
    WorkflowEffectsRepository,
    MailEffectSender,
    WorkflowQueueWorker,
    WorkflowRunRetention,
    { provide: WORKFLOW_INSTANCE, useFactory: newInstanceName },
    WorkflowDefinitionValidator,
    WorkflowsRepository,
    RunQueueRepository,
    RunJournalRepository,
    RunHistoryRepository,
    WorkflowsService,
    WorkflowRunsService,
    WorkflowMetrics,
    WorkflowGauges,
    RunDecisionsService,
    RunOperationsRepository,
    RunOperationsService,
    RunOperationProcessor,
    RunErasure,
    ConditionalRequests,
  ],
  exports: [WorkflowRunner, WorkflowsService, WorkflowRunsService, StepRegistry, EffectRegistry, RunErasure],
})
export class WorkflowModule {}
