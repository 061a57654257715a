# A crawler of the test fleet: scrapy-redis shares the scheduler and the dupefilter,
# scrapy-robots shares robots.txt and the sites' pace. REDIS_URL comes from -s.
BOT_NAME = "fleetbot"
SPIDER_MODULES = ["fleetbot.spiders"]
USER_AGENT = "Mozilla/5.0 (compatible; FleetBot/1.0; +https://example.com/fleetbot)"

SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
# Several crawlers share one queue: none may delete it when it finishes.
SCHEDULER_PERSIST = True

ROBOTSTXT_OBEY = True
ADDONS = {"scrapy_robots.Addon": 0}
ROBOTSTXT_CACHE_STORAGE = "scrapy_robots.fleet.RedisRobotsStorage"

CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY_JITTER = 0.5
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
