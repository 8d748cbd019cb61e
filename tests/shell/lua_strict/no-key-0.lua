-- A script that takes no key: ElastiCache Serverless refuses it.
return redis.call('TIME')
