import { Module } from '@nestjs/common';
import { FormValidator } from './form-validator.service';

@Module({ providers: [FormValidator], exports: [FormValidator] })
export class ValidationModule {}
