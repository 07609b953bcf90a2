import { Global, Module } from '@nestjs/common';
import { Translator } from './translator.service';

@Global()
@Module({ providers: [Translator], exports: [Translator] })
export class I18nSupportModule {}
