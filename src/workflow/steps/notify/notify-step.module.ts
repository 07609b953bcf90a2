import { Module } from '@nestjs/common';
import { MailModule } from '../../../mail/mail.module';
import { NotifyStep } from './notify-step';

/**
 * The `notify` step type, registered as any third-party step is: a `@WorkflowStep` provider in a
 * module; the step registry discovers it at boot. MailModule comes along so that the mail the step
 * holds can be sent by the runner (MailService) in any application that has this step.
 */
@Module({ imports: [MailModule], providers: [NotifyStep] })
export class NotifyStepModule {}
