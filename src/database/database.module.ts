import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DatabaseClient } from './database-client';
import { DatabaseHealth } from './database-health';
import { DatabaseMetrics } from './database-metrics';
import { DATABASE } from './database.types';
import { ReadReplicas } from './replicas/read-replicas';
import { ReadRouting } from './replicas/read-routing';
import { ReplicaMetrics } from './replicas/replica-metrics';
import { routedDatabase } from './replicas/routed-database';
import { WritePositions } from './replicas/write-positions';

class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(DatabaseClient) private readonly client: DatabaseClient) {}
  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/**
 * Opens the database (PGlite under DATA_DIR, or PostgreSQL when DATABASE_URL is set, with its read
 * replicas from DATABASE_REPLICA_URLS), applies the committed migrations (or, with DATABASE_MIGRATE=false, only checks that they are applied) and checks Unicode case folding (the roles and users modules seed their own
 * rows). Tests hand in their own client.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(existingClient?: DatabaseClient): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DatabaseClient,
          inject: [APP_CONFIG],
          useFactory: async (config: AppConfig) => {
            const client =
              existingClient ??
              (await DatabaseClient.open({
                databaseUrl: config.databaseUrl,
                dataDir: config.dataDir,
                pgliteFsync: config.pgliteFsync,
                pgliteOptimize: config.pgliteOptimize,
                poolSize: config.databasePoolSize,
                listenUrl: config.databaseListenUrl,
                preparedStatements: config.databasePreparedStatements,
              }));
            if (config.databaseMigrate) await client.migrate();
            else await client.assertMigrated();
            await client.assertUnicodeCaseFolding();
            return client;
          },
        },
        // Repositories get the primary, or (with replicas) inside a routed read the replica chosen
        // for it. Without replicas, the primary itself: no lookup on every access of a create.
        {
          provide: DATABASE,
          inject: [DatabaseClient, APP_CONFIG],
          useFactory: (client: DatabaseClient, config: AppConfig) =>
            config.databaseReplicaUrls.length > 0 ? routedDatabase(client.db) : client.db,
        },
        DatabaseLifecycle,
        DatabaseMetrics,
        DatabaseHealth,
        ReadReplicas,
        WritePositions,
        ReplicaMetrics,
        ReadRouting,
      ],
      exports: [DatabaseClient, DATABASE, DatabaseMetrics, DatabaseHealth, ReadRouting],
    };
  }
}
