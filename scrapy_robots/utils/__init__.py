"""Small helpers the stages share: structured header fields (``sfv.py``), an HTML
page's head (``html_head.py``), a response's header values by name (``headers.py``),
and a log line said once per site (``once.py``)."""
