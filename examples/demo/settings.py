# A Scrapy project that uses scrapy-robots: the two lines that matter are marked.
BOT_NAME = "demo"
SPIDER_MODULES = ["demo.spiders"]
USER_AGENT = "Mozilla/5.0 (compatible; DemoBot/1.0; +https://example.com/demobot)"

ROBOTSTXT_OBEY = True
ADDONS = {"scrapy_robots.Addon": 0}  # <- swaps Scrapy's RobotsTxtMiddleware for ours

CONCURRENT_REQUESTS_PER_DOMAIN = 2
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
