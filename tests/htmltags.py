"""The tags, attributes and text of a page a report writes, against the
ones its writer uses (report_test.py, vetreport_test.py): any other came
from a record or a trace, which is hostile."""
import html.parser


class Tags(html.parser.HTMLParser):
    def __init__(self, tags, attrs):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs = tags, attrs
        self.bad = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.tags:
            self.bad.append(f"<{tag}>")
        for k, v in attrs:
            if k not in self.attrs or "javascript" in (v or "").lower():
                self.bad.append(f"<{tag} {k}={v!r}>")

    def handle_data(self, data):
        self.text.append(data)
