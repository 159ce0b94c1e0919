FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 EVALHUB_VAR_DIR=/app/var
WORKDIR /app
COPY requirements.lock .
# The runtime lock only (hashes checked): no test, lint or browser packages in the production image.
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY . .
RUN useradd --create-home evalhub && mkdir -p /app/var /app/uploads && chown -R evalhub /app/var /app/uploads
USER evalhub
EXPOSE 8000
CMD ["gunicorn", "evalhub.wsgi:application", "--bind", "0.0.0.0:8000"]
